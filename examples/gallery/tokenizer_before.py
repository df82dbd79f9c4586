# expect: TW303
"""Reading self.tokenizer, which transformers 5.0 removed in favour of self.processing_class."""

from transformers import Trainer


class DecodingTrainer(Trainer):
    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        loss, logits, labels = super().prediction_step(model, inputs, prediction_loss_only, ignore_keys)
        if labels is not None:
            print(self.tokenizer.batch_decode(labels[:1]))
        return loss, logits, labels
