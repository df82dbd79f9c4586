"""After: self.processing_class, the name every release since 4.46 provides."""

from transformers import Trainer


class DecodingTrainer(Trainer):
    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        loss, logits, labels = super().prediction_step(model, inputs, prediction_loss_only, ignore_keys)
        if labels is not None:
            print(self.processing_class.batch_decode(labels[:1]))
        return loss, logits, labels
