import SocialServer
import SocialApp
import ArgumentParser
print("hi")
