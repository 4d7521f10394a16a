"""Errors a caller can act on."""


class InputError(ValueError):
    """The input cannot be checked as given (empty answer, no context, malformed file...).

    The message always says what was wrong and what to do instead. The CLI maps it to exit status 2
    and the HTTP service to a 4xx response.
    """
