"""relplan: offline trace analysis and reliability planning for LLM serving with vLLM."""

__version__ = "0.1.0"
