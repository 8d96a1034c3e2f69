"""The document itself: telling its type from its bytes, opening it, its pages and PDF text layers, and its bytes
fetched from an ``https`` URL.

``intake`` (type detection, page selection and rendering, limits), ``text_layer`` (a PDF page's own text, with
character boxes), ``native_files`` with ``office``, ``html_input``, ``zip_safety`` and ``native_pages`` (Office and
HTML files read from their own content) and ``url_input`` (a document by URL, under the platform's URL rules). Below the engines, which
read what it opens, and below the job state, whose messages may name a URL; it knows nothing of jobs or AWS.
"""
