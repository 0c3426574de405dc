"""Plumbing every app shares and no app owns: error types, the API's error bodies and paging,
read access, and small helpers of the HTML pages. It imports no app of the project."""
