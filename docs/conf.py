"""fdbu's documentation site (Sphinx with MyST Markdown and the Furo theme; ARCHITECTURE.md says why): built
offline by `make docs` into build/docs/html, opened from disk; the build is strict (-W -n: a broken link, a
missing reference or a page outside the navigation fails it)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "fdbu"
author = "the fdbu authors"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx-mathjax-offline", "fdbu_docs"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext"]
myst_enable_extensions = ["dollarmath", "amsmath", "deflist"]
myst_heading_anchors = 3
html_theme = "furo"
html_title = "fdbu"
html_static_path: list = []
html_permalinks = True
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False
# search's result summaries are fetched from each page, which a browser refuses for a site opened from disk
# (file://): without them the results list the pages, with no console error
html_show_search_summary = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
suppress_warnings = ["myst.header"]
