"""Subword features: words the test split uses share features with the train-split words they resemble."""

from __future__ import annotations

import numpy as np

from agentgym_envs.core.tokens import VOCAB_SIZE, encode
from trainers.subwords import MAX_FEATURES, feature_table, token_features

BUCKETS = 8192


def test_a_paraphrased_word_shares_ngrams_with_the_word_it_resembles():
    assert set(token_features(" passphrase", BUCKETS)) & set(token_features(" password", BUCKETS))
    assert set(token_features(" forgotten", BUCKETS)) & set(token_features(" forgot", BUCKETS))


def test_case_and_leading_space_do_not_change_a_tokens_features():
    assert token_features("Locked", BUCKETS) == token_features(" locked", BUCKETS)


def test_unrelated_words_share_no_feature():
    assert not set(token_features(" refund", BUCKETS)) & set(token_features(" migration", BUCKETS))


def test_feature_table_rows_are_the_token_features_and_their_weights_average_them():
    features, weights = feature_table(BUCKETS)
    assert features.shape == weights.shape == (VOCAB_SIZE + 1, MAX_FEATURES)
    (token,) = encode(" password")
    row = token_features(" password", BUCKETS)
    assert features[token, : len(row)].tolist() == row
    assert (features[token, len(row) :] == BUCKETS).all()
    assert np.isclose(weights[token].sum(), 1.0)
    assert (weights[-1] == 0).all()  # the PAD row has no features
