"""Lessons: the guided walks (lessons/*.md) offered on the page, their claims measured with the tabs' own
functions, the player that steps through them, and the handout. This room reads the tabs; no tab reads it."""
