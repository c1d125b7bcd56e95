"""Exceptions raised for bad input.

Every message names the offending column, value or file and says what to do.
"""


class FairpathInputError(ValueError):
    """Bad input: a column, value, file or setting that fairpath cannot use as given."""
