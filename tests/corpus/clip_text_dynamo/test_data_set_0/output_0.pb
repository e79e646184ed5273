Btext_embedsJ@§–_ΏΟ+ΐW¶Ώ„PΏa„ª>ζΫUΏΦFΎ…L¨Ώ‡X>ο0σ>{’ΛΏKHb?O
?ποδ=+@?(VKΎ