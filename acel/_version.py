"""The toolkit's version in the source tree (``acel.__version__``): its own module, so that
a submodule reads it without importing the ``acel`` package (no import circle, issue 34)."""

__version__ = "0.1.0"
