"""The report: the leaderboard as data (`board`), as md, tex and csv (`tables`), a sample's drill-down
(`drilldown`), the page and its files (`site`, `site_assets/`)."""
