"""The HTML pages, one module per area. Views are thin: they bind the shared FilterSets to the
query, call selectors, and render one template per page whose `{% partialdef %}`s answer htmx
requests. Reads are open while settings.API_ANONYMOUS_READ is on, as for the API; otherwise
they need a login.
"""
