"""What ``DPOTrainer.__init__`` and ``GRPOTrainer.__init__`` share, in the order they need it.

Before ``Trainer.__init__`` (:func:`prepare_parts`): check the config type, load the policy when it is
given as a model id / local folder (``model_init_kwargs``, ``trust_remote_code``, float32 by default as
TRL; ``quantization_config`` as TRL, see :func:`quantization_kwargs`), seeded first as TRL so that a PEFT
adapter (``peft_config``) is initialised the same in every run with one seed, wrap it in that adapter, load the tokenizer from the model's folder when none
is given, set up the reference policy, and turn dropout off (``disable_dropout``).
After it (:func:`attach_owned_callbacks`): move the reference to the device (sharded like the policy under
FSDP2, see :mod:`trainwright.trainers.common.distributed`) and attach the callbacks the configuration asks for
(TR-DPO's :class:`ReferenceSyncCallback`, the GRPO completions table).

TRL loads a second copy of the policy from ``model.config._name_or_path`` as the reference, which fails
for a model built in memory; :func:`~trainwright.trainers.common.reference.build_reference_model` takes a
frozen copy instead, so the reference works for any ``nn.Module``.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from transformers import Trainer, TrainingArguments, set_seed

from trainwright.callbacks.checkpoint_guard import (
    CheckpointGuardCallback,
    CheckpointGuardWarning,
    checkpoint_folders,
    newest_complete_checkpoint,
)
from trainwright.callbacks.checkpointed import restore_from_checkpoint
from trainwright.callbacks.completions_log import CompletionsLogCallback
from trainwright.callbacks.reference_sync import ReferenceSyncCallback
from trainwright.trainers.common.distributed import (
    check_distributed_support,
    check_launch,
    enable_fsdp_on_cpu,
    prepare_reference,
    refuse_deepspeed_on_cpu,
)
from trainwright.trainers.common.reference import build_reference_model, is_peft_model

_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}

logger = logging.getLogger(__name__)


def init_kwargs(args: TrainingArguments) -> dict[str, Any]:
    """``from_pretrained`` kwargs from ``args``: ``model_init_kwargs`` (copied), ``trust_remote_code``, dtype.

    ``dtype`` defaults to float32 (transformers 5 defaults to the checkpoint's dtype; TRL to float32, and
    a TRL script must load the same weights here); the strings "bfloat16" / "float16" / "float32" /
    "auto" are accepted, as in TRL.
    """
    kwargs = dict(getattr(args, "model_init_kwargs", None) or {})
    kwargs.setdefault("trust_remote_code", getattr(args, "trust_remote_code", False))
    dtype = kwargs.get("dtype", "float32")
    if isinstance(dtype, str) and dtype != "auto":
        if dtype not in _DTYPES:
            raise ValueError(
                f"model_init_kwargs['dtype']={dtype!r}: use a torch.dtype or one of 'auto', {', '.join(_DTYPES)}"
            )
        dtype = _DTYPES[dtype]
    kwargs["dtype"] = dtype
    return kwargs


def load_pretrained(model_id: str, auto_class: Any, args: TrainingArguments, **extra: Any) -> nn.Module:
    """``auto_class.from_pretrained(model_id, **init_kwargs(args), **extra)`` with the id in any error."""
    try:
        return auto_class.from_pretrained(model_id, **{**init_kwargs(args), **extra})
    except OSError as error:
        raise OSError(
            f"could not load {auto_class.__name__} from {model_id!r} (a hub id or a local folder written by "
            f"save_pretrained): {error}"
        ) from error


def quantization_kwargs(quantization_config: Any, args: TrainingArguments) -> dict[str, Any]:
    """``from_pretrained`` kwargs for the trainers' ``quantization_config`` argument (TRL's), or a named error.

    Accepted as in TRL (handed to ``from_pretrained`` of the policy and of a reference loaded from an id);
    refused by name where it cannot work: given twice (also in ``model_init_kwargs``, as TRL refuses), or a
    ``BitsAndBytesConfig`` where bitsandbytes cannot run (not installed, or no CUDA GPU), which would
    otherwise fail deep inside ``from_pretrained``.
    """
    if quantization_config is None:
        return {}
    if "quantization_config" in (getattr(args, "model_init_kwargs", None) or {}):
        raise ValueError(
            "quantization_config is given both as a trainer argument and in args.model_init_kwargs; give it once"
        )
    name = type(quantization_config).__name__
    if name == "BitsAndBytesConfig":
        import importlib.util

        missing = importlib.util.find_spec("bitsandbytes") is None
        if missing or not torch.cuda.is_available():
            why = "the bitsandbytes package is not installed" if missing else "no CUDA GPU is available"
            raise ValueError(
                f"quantization_config={name}(...) cannot be used here: {why}, and bitsandbytes' 4-/8-bit "
                "layers need both. Drop quantization_config to train in full precision, or run on a CUDA "
                "machine with bitsandbytes installed"
            )
    return {"quantization_config": quantization_config}


def load_model(model: str | nn.Module, args: TrainingArguments, quantization_config: Any = None) -> nn.Module:
    """The causal LM: loaded when ``model`` is an id / folder, else used as given (TRL warns and ignores
    ``model_init_kwargs`` then; so do we). ``quantization_config`` needs a model to load: with a model
    instance it is refused (as TRL's DPO does; TRL's GRPO ignores it with a warning)."""
    if isinstance(model, str):
        from transformers import AutoModelForCausalLM

        return load_pretrained(
            model, AutoModelForCausalLM, args, **quantization_kwargs(quantization_config, args)
        )
    if quantization_config is not None:
        raise ValueError(
            "quantization_config only applies when the model is loaded from an id or folder (a str); this model "
            "is already instantiated: quantize it when you load it, or pass its id"
        )
    if getattr(args, "model_init_kwargs", None):
        logger.warning(
            "model_init_kwargs is ignored: the model is already instantiated (it only applies to models given "
            "as an id or folder)"
        )
    return model


def model_source(model: str | nn.Module) -> str:
    """Where a model came from: the id / folder it was loaded from, or "" for a model built in memory."""
    if isinstance(model, str):
        return model
    config = getattr(model, "config", None)
    return getattr(config, "_name_or_path", "") or ""


def default_output_dir(model: str | nn.Module, suffix: str) -> str:
    """TRL's output folder when no ``args`` are given: ``<model name>-<suffix>``, the model name being the
    last part of its id / folder (``Qwen/Qwen2-0.5B`` → ``Qwen2-0.5B-DPO``). A model built in memory has
    no name (TRL would write ``-DPO``); its class name stands in."""
    name = model_source(model).rstrip("/").split("/")[-1]
    return f"{name or type(model).__name__}-{suffix}"


def padding_token_id(processing_class: Any, model: nn.Module, who: str) -> int:
    """The id to pad with: the tokenizer's pad token, else its EOS token, as TRL pads.

    TRL sets ``tokenizer.pad_token = eos_token`` on the user's tokenizer; we leave the tokenizer as it
    was and hand the id to whatever pads (collators, ``generate``). The model's configs get it only where
    they name no pad id, so that ``generate`` and a saved ``generation_config.json`` agree with the
    padding (TRL overwrites them). A processor's tokenizer is used for a multimodal processor.
    """
    tokenizer = getattr(processing_class, "tokenizer", processing_class)
    pad = getattr(tokenizer, "pad_token_id", None)
    if pad is None:
        pad = getattr(tokenizer, "eos_token_id", None)
    if pad is None:
        raise ValueError(
            f"{who}: the tokenizer has neither a pad token nor an EOS token to pad with; give it one, e.g. "
            "tokenizer.pad_token = tokenizer.unk_token, or tokenizer.add_special_tokens({'pad_token': '<pad>'}) "
            "followed by model.resize_token_embeddings(len(tokenizer))"
        )
    config = getattr(model, "config", None)
    get_text_config = getattr(config, "get_text_config", None)
    configs = [
        get_text_config() if callable(get_text_config) else config,
        getattr(model, "generation_config", None),
    ]
    for part in configs:
        if part is not None and getattr(part, "pad_token_id", None) is None:
            part.pad_token_id = pad
    return int(pad)


def load_processing_class(
    processing_class: Any, model: str | nn.Module, args: TrainingArguments, who: str
) -> Any:
    """The tokenizer: as given, else loaded from the model's id / folder (as TRL), else a clear error."""
    if processing_class is not None:
        return processing_class
    source = model_source(model)
    if not source:
        raise ValueError(
            f"{who} needs processing_class (the tokenizer): the model was built in memory, so there is no "
            f"folder to load a tokenizer from; pass processing_class=tokenizer"
        )
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(
            source, trust_remote_code=getattr(args, "trust_remote_code", False)
        )
    except (OSError, ValueError) as error:
        raise ValueError(
            f"{who}: no processing_class was given and none could be loaded from {source!r} ({error}); "
            f"pass processing_class=tokenizer"
        ) from error


def disable_dropout(*modules: nn.Module | None) -> None:
    """Set every ``nn.Dropout``'s probability to 0 (as TRL's ``disable_dropout``): a deterministic policy
    makes the log-prob ratios and the reference log-probs comparable from one forward to the next."""
    for module in modules:
        for sub in module.modules() if module is not None else ():
            if isinstance(sub, nn.Dropout):
                sub.p = 0.0


@dataclass
class TrainerParts:
    """What :func:`prepare_parts` hands back to the trainer's ``__init__``."""

    args: Any
    model: nn.Module
    processing_class: Any
    ref_model: nn.Module | None  # the reference to keep (None: PEFT, precomputed, or not needed)
    given_ref_model: nn.Module | None  # the user's ref_model, loaded if it was an id (DPO precompute uses it)


def prepare_parts(
    *,
    who: str,
    args: Any,
    config_class: type,
    default_output_dir: str,
    model: str | nn.Module,
    processing_class: Any,
    ref_model: str | nn.Module | None,
    needs_reference: Callable[[Any], bool],
    peft_config: Any = None,
    quantization_config: Any = None,
) -> TrainerParts:
    """Everything the trainers do before ``Trainer.__init__`` (see the module docstring).

    ``needs_reference(args)`` says whether the objective needs a reference module; none is kept for a
    PEFT policy all the same (its adapter-disabled self serves).
    """
    args = args if args is not None else config_class(output_dir=default_output_dir)
    if not isinstance(args, config_class):
        raise TypeError(
            f"{who}: args must be a trainwright {config_class.__name__}, got {type(args).__name__} (a TRL "
            f"config works after changing its import to trainwright)"
        )
    if ref_model is not None and ref_model is model:
        raise ValueError(
            "ref_model is the same object as model: the reference would move with the policy. Pass "
            "ref_model=None to use a frozen copy (or the adapter-disabled base for PEFT models)."
        )
    check_launch(args)
    refuse_deepspeed_on_cpu(args)
    enable_fsdp_on_cpu(args)  # before Trainer.__init__ builds its Accelerator, which reuses this state
    source = model
    set_seed(args.seed)  # as TRL, before the model: a peft_config adapter's random init is then reproducible
    model = load_model(model, args, quantization_config)
    if peft_config is not None:
        if is_peft_model(model):
            raise ValueError("model is already a PeftModel; do not pass peft_config as well")
        from peft import get_peft_model

        model = get_peft_model(model, peft_config)
    processing_class = load_processing_class(processing_class, source, args, who)
    if isinstance(ref_model, str):
        from transformers import AutoModelForCausalLM

        ref_model = load_pretrained(
            ref_model, AutoModelForCausalLM, args, **quantization_kwargs(quantization_config, args)
        )
    if getattr(args, "sync_ref_model", False) and is_peft_model(model) and ref_model is None:
        raise ValueError(
            "sync_ref_model (TR-DPO) needs a separate reference model, but a PEFT policy uses its own "
            "adapter-disabled base as reference; pass ref_model or turn sync_ref_model off"
        )
    reference = build_reference_model(model, ref_model) if needs_reference(args) else None
    if args.disable_dropout:
        disable_dropout(model, reference, ref_model)
    return TrainerParts(args, model, processing_class, ref_model=reference, given_ref_model=ref_model)


def attach_owned_callbacks(trainer: Trainer, ref_model: nn.Module | None) -> CompletionsLogCallback | None:
    """After ``Trainer.__init__``: the reference on the device, TR-DPO sync, the completions table and
    the checkpoint guard.

    Returns the completions callback (GRPO hands it rows), or ``None`` when ``log_completions`` is off.
    """
    args = trainer.args
    check_distributed_support(trainer)
    if ref_model is not None:
        # on the device; under FSDP2 sharded like the policy (trainwright.trainers.common.distributed)
        ref_model = trainer.ref_model = prepare_reference(trainer, ref_model)
    if getattr(args, "sync_ref_model", False):
        if ref_model is None:
            raise ValueError("sync_ref_model needs a reference model to move, but this run keeps none")
        trainer.add_callback(
            ReferenceSyncCallback(ref_model, args.ref_model_mixup_alpha, args.ref_model_sync_steps)
        )
    completions = None
    if getattr(args, "log_completions", False):
        completions = CompletionsLogCallback(
            getattr(args, "completions_jsonl", None),
            num_to_print=getattr(args, "num_completions_to_print", None),
        )
        trainer.add_callback(completions)
    # Last, so that it marks a checkpoint complete after every other callback has written into it.
    trainer.add_callback(trainer.pop_callback(CheckpointGuardCallback) or CheckpointGuardCallback())
    return completions


def tag_model(model: nn.Module, *tags: str) -> None:
    """Add ``tags`` to ``model.model_tags`` (as TRL tags ``trl`` + the trainer's name), which
    ``Trainer.create_model_card`` and ``push_to_hub`` write into the model card; a model that keeps no
    tags (not a ``PreTrainedModel``) is left alone."""
    add = getattr(model, "add_model_tags", None)
    if callable(add):
        add(list(tags))


def resolve_resume(trainer: Trainer, resume_from_checkpoint: str | bool | None) -> str | bool | None:
    """``resume_from_checkpoint=True`` means the newest *complete* checkpoint (a folder torn by a crash
    during a save is skipped, with a warning), not the newest folder as in ``Trainer.train``. The
    trainer-owned callbacks get their checkpoint state back before training starts.

    When every ``checkpoint-N`` folder is torn (a kill during the very first save), there is nothing to
    resume from, and raising would leave a restart loop stuck until someone deletes the folder: the run
    starts from scratch with a warning, and the guard sets the torn folders aside as
    ``incomplete-checkpoint-N`` (nothing is deleted). With no ``checkpoint-N`` folder at all, ``True``
    still raises, as in ``Trainer.train``: that is a wrong ``output_dir``, not a crash."""
    checkpoint = resume_from_checkpoint
    if checkpoint is True:
        output_dir = trainer.args.output_dir
        checkpoint = newest_complete_checkpoint(output_dir)
        torn = [str(folder) for _, folder in checkpoint_folders(output_dir)]
        if checkpoint is None and not torn:
            raise ValueError(f"resume_from_checkpoint=True but no checkpoint was found in {output_dir}")
        if checkpoint is None:
            warnings.warn(
                f"resume_from_checkpoint=True, but no checkpoint in {output_dir} is complete (a crash during "
                f"the first save tore {', '.join(torn)}): training starts from scratch, and the torn folders "
                "are set aside as incomplete-checkpoint-N (nothing is deleted)",
                CheckpointGuardWarning,
                stacklevel=3,
            )
    if isinstance(checkpoint, str):
        restore_from_checkpoint(trainer.callback_handler.callbacks, checkpoint)
    return checkpoint
