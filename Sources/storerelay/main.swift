print("storerelay")
