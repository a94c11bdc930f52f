// fdbu's search ranking (html_search_scorer): Sphinx's own scores (a setting's object first, then titles, then
// text), and, between pages its text match scores alike, the page holding the query's words more often first.
// Sphinx scores a page the same whether a word appears in it once or fifty times and orders ties by name, so a
// search listed whole pages alphabetically. The bonus stays below 1: it orders ties and crosses no tier.
var Scorer = {
  score: (result) => {
    const [docname, , , , score, , kind] = result;
    const texts = window.FDBU_PAGE_TEXTS;
    if (kind !== "text" || !texts) return score;
    const html = texts[docname + ".html"];
    if (!html) return score;
    Scorer._words = Scorer._words || (new URLSearchParams(location.search).get("q") || "")
      .toLowerCase().split(/[^\p{L}\p{N}_.]+/u).filter((w) => w.length > 1);
    Scorer._text = Scorer._text || {};
    const text = (Scorer._text[docname] = Scorer._text[docname] || html.replace(/<[^>]+>/g, " ").toLowerCase());
    let count = 0;
    for (const word of Scorer._words) count += text.split(word).length - 1;
    return score + count / (count + 1);
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {0: 15, 1: 5, 2: -5},
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
