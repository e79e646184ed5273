
BlogitsJ(-<UžL½ÄJ =]¹½]¦ó½Üeu=N x<œ )¾‰Ü¼1oÚ½