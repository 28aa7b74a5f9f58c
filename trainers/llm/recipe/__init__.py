"""The project's own tiny chat model, made from nothing the tests would download: augmented
train-split tasks and the expert's conversations on them (:mod:`.corpus`), a tokenizer and a
Llama network of a few sizes (:mod:`.model`), the expert's corrections of the SFT'd model's
slips (:mod:`.corrections`), and the whole build, base to SFT'd model (:mod:`.build`,
``agentgym llm-build-model``)."""
