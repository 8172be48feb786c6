"""Two ARIA faults in Gradio 6.31's markup, fixed in the page (a page script: app.launch_options passes it).

- Its empty-value placeholder (a gr.Plot with no figure yet, e.g. Train live before training) is
  `<div class="empty" aria-label="Empty value">` with no role: ARIA forbids a name on a plain div (axe-core's
  serious `aria-prohibited-attr`). Given role="img", the placeholder is an image named "Empty value".
- A text box with a copy button (the "Link to this view" box) wraps the button and the box in one
  `<label>` with the button first: HTML gives a label to its first control, so the button takes the
  label and the box has no name. The box is named by the label's text.

A MutationObserver (one pass per frame) fixes what Gradio adds or redraws.
"""

ARIA_FIXES_JS = """() => {
  let queued = false;
  const pass = () => {
    queued = false;
    document.querySelectorAll('.empty[aria-label]:not([role])').forEach((box) => box.setAttribute('role', 'img'));
    document.querySelectorAll('label textarea:not([aria-label]), label input:not([aria-label])').forEach((field) => {
      if (field.labels && field.labels.length) return;
      const info = field.closest('label').querySelector('[data-testid=block-info]');
      if (info && info.textContent.trim()) field.setAttribute('aria-label', info.textContent.trim());
    });
  };
  new MutationObserver(() => { if (!queued) { queued = true; requestAnimationFrame(pass); } })
    .observe(document.body, {childList: true, subtree: true});
  pass();
}"""
