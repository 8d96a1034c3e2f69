"""The core every other package may use, importing none of them: what a job is made of, not what it does.

The platform's defaults (``defaults``: the values of ``default_values`` and the limits ``limits`` derives from
them), the error codes and job errors (``errors``, ``client_errors``), the model table that routes each model
(``routing``), the result schema (``results``), the bucket's layout (``s3_layout``), the runtime settings read from
the environment (``settings``), the page-chunk plan both routes split long documents by (``chunks``), outbound HTTP
under the platform's URL rules (``safe_http`` over ``url_policy``), the job metrics and traces of the handlers
(``metrics``, ``tracing``) and the word measure the benchmarks report (``text_metrics``).

Why a floor of its own: these are the facts every stage of a job shares. Kept below everything and free of the
packages above, they can be imported from anywhere without a loop, and a change here is visibly a change to all.
"""
