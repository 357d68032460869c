"""The application: the ``acel`` command line, the demo and its data sets.

It sits on top of the public API (:mod:`acel`) and is its first client; nothing
below this package imports it.
"""
