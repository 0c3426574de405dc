"""The surface: every HTML page (web.pages), every JSON API view with its response shapes
(web.api), the template tags and page forms, and the whole URL tree (web.urls). It sits above
every domain app and reads them through their selectors and services; no domain app imports it."""
