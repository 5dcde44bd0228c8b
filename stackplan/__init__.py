"""``python -m stackplan``: the command line's name (a contract), kept as a two-line package over dbx_ai_infra."""
