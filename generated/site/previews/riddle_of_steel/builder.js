window.rulesdslPreviews("riddle_of_steel/builder.html", {});
