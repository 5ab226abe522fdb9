"""The chat widget: the anywidget, its renderer sink (``renderer.py``) and
button prompter (``buttons.py``), drafts, the page's messages."""
