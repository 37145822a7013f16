"""The batched MLP trainer equals separate training and learns a known function."""

import numpy as np
import torch

from methods.forecasters.mlp import MLPForecaster, train_batched_mlp


def test_batched_training_equals_separate_training():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3, 130, 4)).astype(np.float32)
    y = (np.sin(X[..., 0]) + 0.1 * rng.normal(size=(3, 130))).astype(np.float32)
    seeds = [11, 22, 33]
    kwargs = dict(hidden=8, epochs=5, lr=0.05, momentum=0.9, batch_size=32)
    batched = train_batched_mlp(X, y, seeds=seeds, **kwargs)
    with torch.no_grad():
        together = batched(torch.as_tensor(X)).numpy()
    for g, seed in enumerate(seeds):
        alone = train_batched_mlp(X[g : g + 1], y[g : g + 1], seeds=[seed], **kwargs)
        with torch.no_grad():
            np.testing.assert_allclose(alone(torch.as_tensor(X[g : g + 1])).numpy()[0], together[g], atol=1e-5)
        np.testing.assert_allclose(alone.w1.detach().numpy()[0], batched.w1.detach().numpy()[g], atol=1e-5)


def test_same_seed_same_model_and_seed_matters():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1, 50, 2)).astype(np.float32)
    y = X[..., 0]
    a = train_batched_mlp(X, y, seeds=[5], hidden=4, epochs=3, lr=0.1)
    b = train_batched_mlp(X, y, seeds=[5], hidden=4, epochs=3, lr=0.1)
    c = train_batched_mlp(X, y, seeds=[6], hidden=4, epochs=3, lr=0.1)
    assert torch.equal(a.w1, b.w1)
    assert not torch.equal(a.w1, c.w1)


def test_forecaster_learns_a_smooth_function():
    rng = np.random.default_rng(2)
    X = rng.uniform(-2, 2, size=(600, 2, 1))
    y = 10 + 5 * np.sin(X[..., 0])  # raw scale far from 0: the target is standardised internally
    model = MLPForecaster(hidden=20, epochs=200, lr=0.05, batch_size=50).fit(X, y, seeds=[0, 1])
    grid = np.linspace(-1.5, 1.5, 50)[:, None, None].repeat(2, axis=1)
    err = model.predict(grid) - (10 + 5 * np.sin(grid[..., 0]))
    assert np.sqrt(np.mean(err**2)) < 0.3
