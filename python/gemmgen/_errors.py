"""The package's exceptions: each carries the rule id docs/errors.md catalogs."""


class Error(Exception):
    """A gemmgen failure: ``rule`` names the rule (docs/errors.md), ``str()`` is the message."""

    def __init__(self, rule, message):
        super().__init__(message)
        self.rule = rule


class CompileError(Error):
    """gemmgen refused the problem or schedule (a user error)."""


class CudaError(Error):
    """CUDA refused a launch, or there is no GPU."""
