def log = new File(basedir, 'build.log').text
assert log.contains('OLDEST OKHTTP OK okhttp=5.3.0') : 'the program did not finish on OkHttp 5.3.0'
true
