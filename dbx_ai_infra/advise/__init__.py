"""``python -m stackplan advise``: read how the stack's compute ran, and propose priced edits of the stack."""
