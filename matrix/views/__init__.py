"""The matrix's HTML pages: the matrix, one cell's explanation, a model, a runtime, and the
InferenceServices with what OME does with each today (it polls the matrix and links to the
pipeline patches its rows can take). Views are thin: they bind the shared FilterSets to the
query, call selectors, and render one template per page whose `{% partialdef %}`s answer htmx
requests. Reads are open while settings.API_ANONYMOUS_READ is on, as for the API; otherwise
they need a login.
"""
