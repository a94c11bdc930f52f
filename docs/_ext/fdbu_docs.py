"""Sphinx extension of fdbu's docs: `{fdbu-reference} NAME` renders fdbu.cli.docs.PAGES[NAME] (made from the
registries while the site builds, so the Reference cannot drift from the code) as Markdown in its page."""
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


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


def setup(app):
    app.add_directive("fdbu-reference", Reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
