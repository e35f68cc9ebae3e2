"""The web gateway: Arena in a browser.

An ASGI app (Starlette on uvicorn) that serves the pages (plain HTML, ES modules and CSS
from ``static/``, no build step) and a small JSON + server-sent-events API for them. It
talks to the other services only through their gRPC APIs, with the SDK's
``ArenaClient``: reads with the gateway's own service token (or the reader's token when
reading is restricted), actions always with the token the person entered in the page.

Read top-down: ``settings.py`` (configuration), ``gateway.py`` (the gRPC side),
``views.py`` (protobufs to the JSON the pages draw), ``live.py`` (streams as SSE),
``forms.py`` (request bodies to protobufs), ``app.py`` (routes, headers, errors),
``__main__.py`` (run it).
"""
