"""The exit codes of ``python -m stackplan`` (a public contract), stated once."""

EXIT_OK = 0  #: success
EXIT_VIOLATIONS = 1  #: a mandatory policy violation, or a failure that is not the input's fault
EXIT_INVALID = 2  #: invalid input: one message names the file, the field and the fix; nothing is written
EXIT_INTERRUPTED = 130  #: Ctrl-C or SIGTERM; nothing is written
