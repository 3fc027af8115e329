"""The report's sections, one module per analysis, named after it.

Each module holds the section's data model, `build` (the analysis's model -> the section's),
`chart` (Altair, or None when there is nothing to draw) and `SECTION`, the
`relplan.report.section.Section` its registry row names ("relplan.report.sections.NAME:SECTION").
"""
