"""The command line of ``python -m stackplan`` and the ``stackplan`` command: the parser built from each command's
declaration (`stackplan_cli.commands`), and the commands' work. The top layer: it calls the engine (`stackplan`),
the readers of outside documents (`stackplan_sources`), advise (`stackplan_advise`) and the reports
(`stackplan_reports`)."""
