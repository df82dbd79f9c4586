"""No move (was TW202 until 2026-12-06): before the evaluation loop, one batch of the evaluation set is
decoded greedily, printed and sent to the trackers with `self.log(...)`, then dropped from
`state.log_history`. No event fires before `evaluation_loop` on a user's `evaluate()`/`predict()`; the
events after it (`on_evaluate`/`on_predict`) find the model switched to `eval()`, so a model with dropout
would decode other samples there than the override did in the middle of training. The toy model has no
dropout, so the oracle found the old move equal: a blind re-judgement of the corpus (LABELS.md, condition
1, "when") found it is not the same program."""

from transformers import Trainer


class SampleTableTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.generate_during_eval = True

    def evaluation_loop(self, dataloader, description, prediction_loss_only=None, ignore_keys=None,
                        metric_key_prefix="eval"):  # fmt: skip
        if self.generate_during_eval:
            first = next(iter(dataloader))
            prompts = first["input_ids"][:2, :4].to(self.model.device)
            generated = self.model.generate(prompts, max_new_tokens=3, do_sample=False)
            rows = [self.processing_class.decode(o) for o in generated]
            print("samples:", "|".join(rows))
            self.log({"samples": "|".join(rows)})
            self.state.log_history.pop()
        return super().evaluation_loop(
            dataloader, description, prediction_loss_only, ignore_keys, metric_key_prefix
        )
