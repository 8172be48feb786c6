"""What a view's inputs and outputs look like on the wire, read and made in the handler's own thread.

Gradio 6.31 runs each output's `postprocess`, and each input's `preprocess`, in a worker thread of its
own, and for a returned component such as `gr.Dropdown(choices=...)` builds a new component and its
JSON schema. For an output left unchanged (`gr.skip()`) it builds a new copy of the component and its
configuration (three JSON schemas) for the visitor's session, to change nothing. The costs are measured
in ui/runtime/README.md.

So the views' events are registered with `postprocess=False` (ui/page/context.py) and hand Gradio their
outputs already in the form the browser receives, made here by the same `postprocess` Gradio would call
(tests/app/api/test_wire.py compares the two, byte for byte); `Blocks` passes skipped outputs over; and the
API-only endpoints are registered with `preprocess=False`, `received` running the same `preprocess`
calls here, with the same checks and messages.
"""
from __future__ import annotations

import copy
import logging
import re
from typing import Any

import gradio as gr
from gradio import processing_utils
from gradio.data_classes import GradioModel, GradioRootModel
from gradio.exceptions import ComponentProcessingError
from gradio.state_holder import SessionState

from model.inputs import shortened
from ui.toasts import refusal

log = logging.getLogger(__name__)

# a returned component's value needs no postprocessing when it is one of these (Dropdown, Slider,
# Checkbox, Textbox, Markdown): Gradio would pass it through unchanged
_PLAIN = (str, int, float, bool, type(None))


def is_update(value) -> bool:
    """gr.skip(), gr.update(...) or a component returned to change properties (visible, choices)."""
    return isinstance(value, gr.components.Component) or (
        isinstance(value, dict) and "update" in str(value.get("__type__", "")))


def sent(component: gr.components.Component, value: Any) -> Any:
    """`value` as Gradio sends it to the browser for `component`."""
    if value is None:
        return None
    if isinstance(value, gr.components.Component):  # an update: Gradio builds the new component itself
        update = dict(value.constructor_args, __type__="update")
        if "value" in update and not isinstance(update["value"], _PLAIN):
            update["value"] = sent(component, update["value"])
        return update
    if is_update(value):
        if "value" in value and not isinstance(value["value"], _PLAIN):
            return {**value, "value": sent(component, value["value"])}
        return value
    if isinstance(component, gr.Dataframe) and isinstance(value, dict) and value.keys() == {"headers", "data"}:
        # ui.page.components.table's value, as Dataframe.postprocess would send it (it would also look for
        # polars on disk, every call)
        if value["data"] and len(value["headers"]) == len(value["data"][0]):
            return {"headers": value["headers"], "data": value["data"], "metadata": None}
    if isinstance(component, gr.HighlightedText) and not component.combine_adjacent and isinstance(value, list) \
            and all(isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) for pair in value):
        # (token, label) pairs, as HighlightedText.postprocess sends them without a pydantic model per token
        return [{"token": component._normalize_token(token), "class_or_confidence": label} for token, label in value]
    out = component.postprocess(value)
    return out.model_dump() if isinstance(out, (GradioModel, GradioRootModel)) else out


def sent_all(outputs: list, result) -> Any:
    """A handler's return value (one value, a tuple, or a {component: value} dict) with every output
    as sent; a single gr.skip() for several outputs stays as it is (Gradio skips them all)."""
    if isinstance(result, dict) and result and all(isinstance(key, gr.blocks.Block) for key in result):
        return {component: sent(component, value) for component, value in result.items()}
    if len(outputs) == 1:
        return sent(outputs[0], result)
    if is_update(result):
        return result
    return tuple(sent(component, value) for component, value in zip(outputs, result))


def received_in_handler(inputs: list) -> bool:
    """Whether `received` can stand in for Gradio's preprocessing of these inputs: plain values only
    (no file or image payloads, which Gradio validates against a data model first)."""
    return all(getattr(component, "data_model", None) is None for component in inputs)


def received(inputs: list, values) -> list:
    """Raw API values as each component's `preprocess` hands them to a handler (a gr.State's value
    arrives as it is). Gradio's own checks say what was wrong (a choice not offered, a slider out of
    range); anything else a component cannot read gets a plain message, never a traceback."""
    out = []
    for component, value in zip(inputs, values):
        if component.stateful:
            out.append(value)
            continue
        try:
            out.append(component.preprocess(value))
        except gr.Error as e:
            raise refused(e) from None
        except Exception:
            log.info("%s could not read %r", type(component).__name__, value, exc_info=True)
            name = getattr(component, "label", None) or type(component).__name__
            raise refusal(f"{name} cannot take the value {shortened(value, 40)!r}.") from None
    return out


def read_here(block_fn) -> bool:
    """Whether Blocks reads this event's inputs itself (Blocks._read_here): every input a component of plain values
    (received_in_handler: no file or image payload, whose data model Gradio validates first), none read with its
    properties, one call at a time, and preprocessing asked for."""
    return bool(block_fn.preprocess and not block_fn.batch and not block_fn.component_prop_inputs
                and all(isinstance(block, gr.components.Component) for block in block_fn.inputs)
                and received_in_handler(block_fn.inputs))


SKIP = {"__type__": "update"}  # gr.skip() as Gradio sends it: the page leaves the output as it is


def is_skip(value) -> bool:
    """gr.skip() (as sent): leave the output as it is."""
    return isinstance(value, dict) and value == SKIP


class Blocks(gr.Blocks):
    """gr.Blocks whose events send an output left unchanged (gr.skip()) as it is, without rebuilding the
    component for the session (see the module docstring). Every other output goes through Gradio's own
    postprocessing, unchanged; tests/app/api/test_wire.py compares the two on the same predictions."""

    async def preprocess_data(self, block_fn, inputs, state, explicit_call: bool = False):
        """Gradio's reading of the inputs, with its refusals as `refused` says, and a call with too few
        values (a plain HTTP caller leaving out one with a default) or one a component cannot read told
        so, where Gradio answered with no message at all. Plain values are read where the request
        arrived (`read_here`)."""
        try:
            if read_here(block_fn):
                return await self._read_here(block_fn, inputs, state, explicit_call)
            return await super().preprocess_data(block_fn, inputs, state, explicit_call)
        except gr.Error as e:
            raise refused(e) from None
        except ValueError as e:  # validate_inputs' count, or a ComponentProcessingError
            log.info("inputs of %s refused", block_fn.name, exc_info=True)
            count = _TOO_FEW.search(str(e))
            message = (f"This endpoint takes {count[1]} values and got {count[2]}: send every parameter, those "
                       "with a default too (the API page lists them)." if count else
                       "One of the values sent cannot be read: the API page gives each parameter's type.")
            raise gr.Error(message, print_exception=False) from None

    async def _read_here(self, block_fn, inputs, state, explicit_call: bool) -> list:
        """Gradio 6.31's preprocess_data, step for step (the visitor's own copy of each control, its value kept
        in the session, files looked for), but each component's `preprocess` called here, not in a worker thread
        of its own: six thread hops for /analyze, each waking a core of a 2-core server and the event loop again."""
        state = state or SessionState(self)
        self.validate_inputs(block_fn, inputs)
        values = []
        for i, block in enumerate(block_fn.inputs):
            if block.stateful:
                values.append(state[block._id])
                continue
            if block._id in state:
                block = state[block._id]
            value = await processing_utils.async_move_files_to_cache(inputs[i], block,
                                                                     check_in_upload_folder=not explicit_call)
            if block._id not in state:
                state[block._id] = block
            state._update_value_in_config(block._id, value)
            try:
                values.append(block.preprocess(value))
            except gr.Error:
                raise
            except Exception as err:
                raise ComponentProcessingError(self._format_processing_error(
                    block_fn, i, block, inputs[i], is_input=True, original_error=err)) from err
        return values

    async def postprocess_data(self, block_fn, predictions, state):
        outputs = list(block_fn.outputs)
        values = predictions
        if is_skip(values) and len(outputs) > 1:
            values = [SKIP] * len(outputs)  # one gr.skip() for every output, as Gradio reads it
        elif isinstance(values, dict) and values and all(isinstance(key, gr.blocks.Block) for key in values):
            at = {block._id: i for i, block in enumerate(outputs)}
            if not all(block._id in at for block in values):
                return await super().postprocess_data(block_fn, predictions, state)
            listed = [SKIP] * len(outputs)
            for block, value in values.items():
                listed[at[block._id]] = value
            values = listed
        elif len(outputs) == 1:
            values = [values]
        if block_fn.batch or not isinstance(values, (list, tuple)) or len(values) != len(outputs):
            return await super().postprocess_data(block_fn, predictions, state)  # Gradio says what is wrong
        skipped = [is_skip(v) and not block.stateful for block, v in zip(outputs, values)]
        if not any(skipped):
            return await super().postprocess_data(block_fn, predictions, state)
        kept = [i for i, skip in enumerate(skipped) if not skip]
        data = []
        if kept:
            some = copy.copy(block_fn)  # the same event with the outputs that change (per call: shared by none)
            some.outputs = [outputs[i] for i in kept]
            kept_values = [values[i] for i in kept]
            data = await super().postprocess_data(some, kept_values if len(kept) > 1 else kept_values[0], state)
        done = dict(zip(kept, data))
        return [done[i] if i in done else dict(SKIP) for i in range(len(outputs))]


# Gradio's own refusal of a dropdown's or radio's value
_NOT_A_CHOICE = re.compile(r"Value: (?P<value>.*?)(?: \(type: <class '\w+'>\))? is not in the list of choices: "
                           r"(?P<choices>.*)", re.S)
_TOO_FEW = re.compile(r"needed: (\d+), got: (\d+)")


def refused(error: gr.Error) -> gr.Error:
    """A gr.Error raised while reading an input, as a visitor should read it. The app's own messages
    (print_exception=False, already escaped) pass unchanged; Gradio's own (a value not among a dropdown's
    choices, a slider out of range) echo the value whole and unescaped, name Python types, and print a
    traceback to the server log for every bad value: they come back short, escaped and logged in one line."""
    if not error.print_exception:
        return error
    message = str(error.message)
    choice = _NOT_A_CHOICE.fullmatch(message)
    if choice:
        message = f"{shortened(choice['value'])} is not one of the choices ({shortened(choice['choices'], 200)})."
    log.info("input refused: %s", shortened(message, 200))
    return refusal(shortened(message, 300))
