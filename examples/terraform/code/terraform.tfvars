env            = "prod"
spot_inference = true
models = {
  chat  = { max = 8 }
  embed = { max = 4 }
}
