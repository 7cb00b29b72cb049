"""The field words of the synthetic map's titles and abstracts (bench/generate.py's small
vocabulary, and the head of bench/vocab.py's Zipf one).

Why a module of its own: the generator imports the vocabularies, and the Zipf vocabulary starts
from these words; kept here, neither imports the other back (tests/unit/test_layers.py: no
circle of imports, bench/ included).
"""

from __future__ import annotations

_TEXT = (
    "learning model models language large neural network networks deep reinforcement policy reward "
    "optimisation optimization gradient training inference reasoning agent agents multi-agent robust "
    "efficient scalable sparse dense attention transformer transformers diffusion generative contrastive "
    "self-supervised supervised unsupervised representation representations embedding embeddings graph "
    "graphs retrieval augmented alignment preference human feedback instruction tuning fine-tuning "
    "pre-training benchmark benchmarks evaluation dataset datasets survey analysis theory bounds "
    "convergence stochastic adaptive hierarchical structured latent variational bayesian causal "
    "counterfactual uncertainty calibration robustness adversarial attacks defense safety privacy "
    "federated distributed parallel memory context long-context tokens token vision visual image video "
    "multimodal speech audio text code program mathematical math planning search tree exploration "
    "exploitation offline online imitation inverse control robotic robot manipulation navigation "
    "simulation transfer domain generalization few-shot zero-shot in-context prompting chain thought "
    "verification verifier process outcome scaling laws compute test-time efficient low-rank adaptation "
    "quantization pruning distillation mixture experts routing sequence state-space recurrent "
    "convolutional kernel spectral molecular protein chemistry physics knowledge factual hallucination "
    "detection segmentation tracking reconstruction rendering radiance fields point clouds"
)
FIELD_WORDS = tuple(_TEXT.split())
