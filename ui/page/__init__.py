"""The page's own parts, shared by every tab: the registration layer (context), the header and its controls, links,
presenter and quiz modes, input checks and messages, labels, components, slides and accessibility. Nothing here
imports a tab."""
