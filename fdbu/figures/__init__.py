"""Figures as bytes: saving, pages and the curves F(t) (`plot`), the sweep's heatmaps (`sweep`), compare's forest
(`forest`)."""
