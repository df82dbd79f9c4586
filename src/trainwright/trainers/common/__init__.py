"""What ``DPOTrainer`` and ``GRPOTrainer`` share: the skeleton both subclass and the parts it is built from.

``skeleton`` (the base class), ``construction`` (what both ``__init__`` do), ``reference`` (the reference
policy), ``logprobs``/``lm_head``/``tied_embedding`` (log-probs with prefix sharing and a fused LM head),
``metrics`` (the logging window), ``streaming``, ``distributed``/``fsdp_private`` (FSDP2),
``config_checks``/``trl_fields``/``trl_hooks`` (the configs' TRL fields), ``router_loss``.
Nothing here imports from ``trainwright.trainers.dpo`` or ``trainwright.trainers.grpo``.
"""
