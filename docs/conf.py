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
html_static_path = ["_static"]
html_css_files = ["fdbu.css"]  # the Reference's settings tables readable on a laptop and a phone
html_permalinks = True
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False
# search's result summaries: Sphinx fetches each page found, which a browser refuses for a site opened from disk
# (file://); the extension (_ext/fdbu_docs.py) builds the pages' texts beside the site and answers those requests
html_show_search_summary = True
html_search_scorer = str(Path(__file__).parent / "_ext" / "scorer.js")  # among pages found alike, the one holding the query's words more often first
autodoc_member_order = "bysource"
autodoc_typehints = "description"
suppress_warnings = ["myst.header"]
