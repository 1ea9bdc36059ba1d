"""The package's version: configure.ac's AC_INIT, which the library it binds
reports as maskkit.version() (python/tests check they agree)."""
__version__ = "0.1.0"
