"""fdbu's version and the version of its metric definitions: a leaf every module may import (importing the
package `fdbu` itself would reach the API, which imports every layer)."""

__version__ = "0.1.0"

DEFINITIONS_VERSION = "fdb-v1.0-unified-4"
# the definitions of Full-Duplex-Bench v1.5's overlap subsets (docs: Definitions 52-60): a tree holding them is
# scored under "<DEFINITIONS_VERSION>+<V15_DEFINITIONS>"; a v1.0 tree's header stays DEFINITIONS_VERSION
V15_DEFINITIONS = "fdb-v1.5-overlap-2"
# the definitions of Full-Duplex-Bench v2's session timing (docs: Definitions 75-86), added the same way
V2_DEFINITIONS = "fdb-v2-session-2"
# the other benchmarks' timing numbers (fdbu.views; docs: Numbers in other benchmarks' terms): a score with views=
# is under "<definitions>+<VIEWS_DEFINITIONS>"; without them nothing changes
VIEWS_DEFINITIONS = "fdbu-views-2"
