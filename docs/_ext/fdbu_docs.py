"""Sphinx extension of fdbu's docs: `{fdbu-reference} NAME` renders fdbu.cli.docs.PAGES[NAME] (made from the
registries while the site builds, so the Reference cannot drift from the code) as Markdown in its page; each
setting's key in the Reference is a searchable object (`{fdbu-setting}`), so a search for `vad.threshold` finds its
row first; and search shows a summary of each page found even when the site is opened from disk (file://), where a
browser refuses the requests Sphinx's search makes for them."""
import json
import re
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

SETTING = "setting"  # the object type of a command's setting (its key), in the std domain
TEXTS = "fdbu-page-texts.js"  # every page's main text, for search's summaries from disk
SHIM = "fdbu-search-offline.js"


class Reference(SphinxDirective):
    required_arguments = 1

    def run(self):
        from fdbu.cli.docs import PAGES

        name = self.arguments[0]
        if name not in PAGES:
            raise self.error(f"fdbu-reference: no page {name!r}; one of {', '.join(PAGES)}")
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(StringList(PAGES[name]().split("\n"), source=f"fdbu.cli.docs.{name}"),
                                self.content_offset, node, match_titles=True)
        return node.children


def setting_role(name, rawtext, text, lineno, inliner, options=None, content=()):
    """`{fdbu-setting}`vad.threshold``: the key as inline code and, where it first appears, a target and an object
    search ranks by its name (the same key under another command is the same setting: one object)."""
    env = inliner.document.settings.env
    std = env.get_domain("std")
    literal = nodes.literal(text, text)
    if (SETTING, text) in std.objects:
        return [literal], []
    anchor = "setting-" + nodes.make_id(text)
    target = nodes.target("", "", ids=[anchor])
    inliner.document.note_explicit_target(target)
    std.note_object(SETTING, text, anchor, location=(env.docname, lineno))
    return [target, literal], []


def _main_html(html: str) -> str:
    """A built page's main content (Furo's `article[role=main]`), as search's summary reads it."""
    m = re.search(r'(<article[^>]*role="main"[^>]*>.*?</article>)', html, re.S)
    return m.group(1) if m else ""


def _page_texts(app, exception) -> None:
    """After an html build: every page's main content into one script the search page loads, keyed by the path
    search asks for, so its summaries need no request (a browser refuses file:// requests)."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    texts = {}
    for docname in sorted(app.env.found_docs):
        page = out / (docname + app.builder.out_suffix)
        if page.is_file():
            texts[docname + app.builder.out_suffix] = _main_html(page.read_text(encoding="utf-8"))
    (out / "_static" / TEXTS).write_text("window.FDBU_PAGE_TEXTS = " + json.dumps(texts) + ";\n", encoding="utf-8")
    (out / "_static" / SHIM).write_text(_SHIM_JS, encoding="utf-8")


_SHIM_JS = """// fdbu: search's page summaries from the texts built beside the site (fdbu-page-texts.js), when the site is
// opened from disk (file://), where a browser refuses the requests Sphinx's search makes for them.
(() => {
  if (location.protocol !== "file:" || !window.FDBU_PAGE_TEXTS) return;
  const realFetch = window.fetch.bind(window);
  window.fetch = (url, ...rest) => {
    const root = new URL(document.documentElement.dataset.content_root || "./", location.href).href;
    const wanted = new URL(String(url), location.href).href.split("#")[0];
    const key = wanted.startsWith(root) ? decodeURIComponent(wanted.slice(root.length)) : null;
    if (key !== null && Object.prototype.hasOwnProperty.call(window.FDBU_PAGE_TEXTS, key))
      return Promise.resolve(new Response(window.FDBU_PAGE_TEXTS[key], {headers: {"Content-Type": "text/html"}}));
    return realFetch(url, ...rest);
  };
})();
"""


def _search_page_scripts(app, pagename, templatename, context, doctree) -> None:
    """The texts and the shim on the search page only (the texts are every page's: no other page loads them)."""
    if pagename == "search":  # added in this event, a script is this page's alone (Sphinx resets them per page)
        app.add_js_file(TEXTS)
        app.add_js_file(SHIM)


def setup(app):
    app.add_directive("fdbu-reference", Reference)
    app.add_object_type(SETTING, SETTING, objname="setting of a command", indextemplate="pair: %s; setting")
    app.add_role("fdbu-setting", setting_role)
    app.connect("html-page-context", _search_page_scripts)
    app.connect("build-finished", _page_texts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
