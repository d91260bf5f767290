"""OpTests of torchvision's CPU ops (`torchvision::roi_align`, ...): run with
`opkit test torchvision::OP --backend torch --tests opkit_torch/vision_optests` where
torchvision imports (docs/torch.md, "torchvision")."""
