"""The ways in: how a job enters the platform and is handed to a route.

``dispatch`` (the invoker: the job queue's consumer, which fetches a URL input, admits the job and hands it to the
CPU processor or the GPU endpoint), ``inbox`` (the drop folder: an object under ``inbox/<model>/`` becomes a job),
``jobs_api`` (the HTTP jobs API behind Cognito) and ``console_publish`` (the web console's files and settings).
Above both routes, which it hands jobs to, and above the job state, where it creates them.
"""
