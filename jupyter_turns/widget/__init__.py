"""The chat widget: the anywidget, its sink and prompter, drafts, the page's messages."""
