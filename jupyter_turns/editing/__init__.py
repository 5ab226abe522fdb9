"""The model changes the notebook: cells proposed and edited through the page, and undo.

``page.py`` asks the bundled extension to change cells; ``cell_tools.py`` holds ``insert_cell`` and
``edit_cell``; ``undo.py`` the undo log and reverting a step; ``undoing.py`` undo in a session
(``%chat undo``, the card's button); ``control.py`` the page's requests to the kernel.
"""
