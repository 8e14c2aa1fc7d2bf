"""Build the report: what a page shows (verdict, tables, charts), the papermill + nbconvert job, the
index page. No torch."""
