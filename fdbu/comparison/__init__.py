"""Comparing scored trees: the trees as compare and report read them (`systems`), the paired comparison
(`pairwise`), a compare.json read back (`compared`), compare's files, figures and console (`files`), what a mark
holds (`marks`)."""
