"""Gradio building blocks for the demo: one module per tab, all built against ui.page.context.Context.

ui/ knows Gradio. It wires components to model/ (through model.registry) and viz/, and does no math.
"""
