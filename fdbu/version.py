"""fdbu's version and the version of its metric definitions: a leaf every module may import (importing the
package `fdbu` itself would reach the API, which imports every layer)."""

__version__ = "0.1.0"

DEFINITIONS_VERSION = "fdb-v1.0-unified-4"
