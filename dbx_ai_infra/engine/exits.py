"""The exit codes of ``python -m stackplan`` (a public contract), stated once: ``--help`` prints `MEANINGS` and
docs/cli.md's table is held equal to it by a test."""

EXIT_OK = 0  #: success
EXIT_VIOLATIONS = 1  #: a mandatory policy violation, or a failure that is not the input's fault
EXIT_INVALID = 2  #: invalid input: one message names the file, the field and the fix; nothing is written
#: an internal error: one line, and the file its traceback was written to (`dbx_ai_infra.engine.crash`)
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  #: Ctrl-C or SIGTERM; nothing is written

#: What each code means, one line each, as ``--help`` and docs/cli.md say it.
MEANINGS = {
    EXIT_OK: "success (the findings, if any, are advisory)",
    EXIT_VIOLATIONS: "a mandatory policy violation (or a failure that is not the input's fault: a workspace that "
                     "does not answer, the Pulumi program's own error)",
    EXIT_INVALID: "invalid input: one message names the file, the field and the fix; nothing is written. Also an "
                  "output that cannot be written whole: a full disk, or standard output closed by its reader",
    EXIT_INTERNAL: "an internal error (a fault of the program, or of the machine it runs on): one line says what "
                   "and where its traceback was written; never a policy result",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C, SIGTERM); nothing is written",
}
